"""Where one element of a value came from, over the whole recorded run.

`trace_element(session, "%loss")` (or with `at=(3, 7)`, or `first_nonfinite(session)` for the
first NaN/Inf the run makes) walks back from that element op by op: each op's element
provenance (engine/ops/provenance.py) names the operand elements that make it, and the trace of
the run (trace.py) says which event made each operand, through calls, branches and loop
iterations (a call's result is what its function returned, a function's argument what the call
passed in). The answer is a `Lineage`:

- `steps`: one path back from the element, an op instance a step, with the element's value and
  the operand elements each step reads, summarised per operand ("%w[3, :] (768 elements)"). For
  a NaN or Inf element the path follows a non-finite operand element first and ends at the
  *origin*: the first op that made a non-finite element from finite ones. Otherwise it follows
  the operand element that holds the value itself (a select's chosen value, a gathered element,
  a copy) where there is one, else the first one made by an op.
- `leaves`: what the element depends on in all: the entry function's arguments (by the names
  ArgumentNames gives them) and constants, with the elements read, and where the walk had to
  stop (a collective's operand on another device, an op hlodbg cannot trace).

A loop's carried state is answered by value: the element of a while's result (or of its state in
some iteration) comes from the last iteration whose body changed it ("when did this value last
change"); the iterations after it passed it on unchanged. So a NaN made in iteration 3 of a
million is found without walking the million.

Element paths fan out (an element of a dot reads a whole row and a whole column), so the work is
bounded: LINEAGE_ELEMENT_LIMIT elements and LINEAGE_QUESTION_LIMIT provenance questions for the
leaves, LINEAGE_PATH_LIMIT steps for the path, LINEAGE_LOOP_LIMIT loop iterations looked at; a
question that passes a bound is answered as far as it got, with a sentence saying which bound
stopped it. Tuples (XLA HLO's loop state, a call's several results) are followed part by part
(lineage_values.py names the values a walk goes through; lineage_answer.py words the answer).

Values come only through the session's value store (`store.value(ref)`, `store.output(e)`),
which recomputes whatever it dropped, and the trace's structure; nothing here re-runs ops.
On a grid the walk stays within the session's device: a collective's elements that come from
other devices are named ("peer" leaves), not followed.
"""
from __future__ import annotations

from collections import deque
from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np

from ..ir.core import Block
from ..ir.dtypes import widen
from ..ir.locations import describe as describe_location
from ..ops.provenance import ProvenanceError, explainer_for, provenance
from .lineage_answer import Fanin, Leaf, Lineage, TraceStep, clipped, nonfinite_count, region_text, value_text
from .lineage_values import MAKES_TUPLE, READS_TUPLE, LineageError, RunValues, part_of
from .scope import find_ref
from .trace import FrameRecord, ResultRef
from .views import as_list

LINEAGE_ELEMENT_LIMIT = 50_000  # elements the search for leaves may visit
LINEAGE_QUESTION_LIMIT = 3_000  # op instances' provenance it may ask (a convolution's answer is a window)
LINEAGE_PATH_LIMIT = 2_000  # steps of the path
LINEAGE_LOOP_LIMIT = 1 << 20  # loop iterations looked at for "when did it last change"

PEER_NOTE = "on another device: the trace of one device's run stops there"

# -- the questions -------------------------------------------------------------------------------


def trace_element(session, value: str, at: Optional[Sequence[int]] = None, event: Optional[int] = None, *,
                  element_limit: int = LINEAGE_ELEMENT_LIMIT, path_limit: int = LINEAGE_PATH_LIMIT,
                  loop_limit: int = LINEAGE_LOOP_LIMIT, question_limit: int = LINEAGE_QUESTION_LIMIT) -> Lineage:
    """Where element `at` of `value` (`%loss`, `%412`, `%5#1`) came from. The value is the one
    the session's position sees (the run's end once it has finished), else the latest run of the
    op making it so far; `event` names the op instance instead. `at` may be omitted for a value
    of one element."""
    walker = _Walker(session, element_limit, path_limit, loop_limit, question_limit)
    node, label = walker.value_named(value, event)
    array = walker.array(node)
    index = _element_index(value, array, at)
    return walker.lineage(node, index, label)


def first_nonfinite(session, kind: str = "nan", advance=None, target=None) -> tuple[str, int, tuple[int, ...]]:
    """(value name, event, index) of the first element the run makes NaN (`kind` "nan"),
    infinite ("inf") or either ("nonfinite": an Inf that later makes a NaN is found first) after the session's position, running forward to find it (with `advance`,
    a callable that continues the run and returns its Stop — a grid target's move — else
    `session.continue_`). With `target` (a grid's DebugTarget, whose session is `session`) every
    device looks, the target moves to the earliest one's hit and focuses it, and the answer is
    about `target.session` then (a NaN made on one device only is found there too)."""
    tests = {"nan": np.isnan, "inf": np.isinf, "nonfinite": lambda wide: ~np.isfinite(wide)}
    if kind not in tests:
        raise LineageError(f"expected nan, inf or nonfinite, not {kind!r}")
    what = {"nan": "NaN", "inf": "Inf", "nonfinite": "NaN or Inf"}[kind]
    if target is not None:
        placed = [(target.sessions[process], bp)
                  for process, bp in zip(target.processes, target.break_at(kind, saved=False))]
        advance = advance or (lambda: target.move("continue_"))
    else:
        placed = [(session, session.break_at(kind, saved=False))]
        advance = advance or session.continue_
    ours = {id(bp) for _, bp in placed}
    try:
        while True:
            stop = advance()
            hits = [h for h in stop.hits if id(h.breakpoint) in ours]
            if hits:
                e = hits[0].event
                break
            if stop.reason == "interrupted":
                raise LineageError(f"the run was interrupted before it made a {what} element")
            if stop.reason == "memory":
                raise LineageError(f"no {what} element before the recording filled its memory: {stop.message}")
            if stop.reason in ("end", "error"):
                why = f": the run failed first ({stop.message})" if stop.reason == "error" else ""
                raise LineageError(f"the run made no {what} element{why}")
    finally:
        for owner, bp in placed:
            owner.breakpoints.remove(bp.id)
    if target is not None:
        session = target.session
    trace = session.timeline.main.trace
    op = trace.ops[e]
    outputs = as_list(session.timeline.main.store.output(e), len(op.results))
    test = tests[kind]
    for k, out in enumerate(outputs):
        wide = widen(np.asarray(out)) if isinstance(out, np.ndarray) or np.isscalar(out) else None
        if wide is not None and wide.dtype.kind in "fc":
            bad = np.argwhere(test(wide))
            if len(bad):
                return op.results[k].name, e, tuple(int(i) for i in bad[0])
    raise LineageError(f"event {e} ({op.name}) stopped at a {kind} breakpoint but its results hold no such element")


# -- the walk --------------------------------------------------------------------------------------


class _Walker(RunValues):
    """The two walks back from an element: the path, and the search for leaves."""

    def __init__(self, session, element_limit: int, path_limit: int, loop_limit: int, question_limit: int):
        super().__init__(session)
        self.element_limit = element_limit
        self.path_limit = path_limit
        self.loop_limit = self.loop_budget = loop_limit
        self.question_limit = question_limit
        self.questions_left: Optional[int] = None  # for the leaves' search (the path is bounded by its length)
        self.notes: list[str] = []
        self._expanded: dict[tuple, tuple] = {}

    # -- naming the value asked about ------------------------------------------------------------
    def value_named(self, name: str, event: Optional[int]) -> tuple[tuple, str]:
        text = name.strip()
        if not text.startswith("%"):
            raise LineageError(f"expected a value name such as %loss or %12, not {name!r}")
        trace = self.trace
        if event is not None:
            if not 0 <= event < len(trace) or not trace.done(event):
                raise LineageError(f"event {event} has not run (the run so far holds {len(trace)} events)")
            for k, result in enumerate(trace.ops[event].results):
                if result.name in (text, text + "#0"):
                    return ("result", event, k), result.name
            raise LineageError(f"event {event} ({trace.ops[event].name}) does not make {text}")
        position = min(self.session.timeline.main.position, len(trace))
        argument = self._argument_named(text, position)
        if argument is not None:
            return argument, text
        for spelled in (text, text + "#0"):
            ref = find_ref(self.session.timeline.main, position, spelled, True)
            if ref is not None:
                return self._node_of_ref(ref), spelled
        for e in range(min(position, len(trace) - 1), -1, -1):  # the latest run so far, at any depth
            if trace.done(e):
                for k, result in enumerate(trace.ops[e].results):
                    if result.name in (text, text + "#0"):
                        return ("result", e, k), result.name
        raise LineageError(f"{text} has not been made by the run so far (run further, or check the name)")

    def _argument_named(self, name: str, position: int) -> Optional[tuple]:
        """An argument of the frame at `position` or of a frame around it (within its function)
        named `name`: a loop's state is a state node, so that the walk says when it last changed."""
        trace = self.trace
        frame = trace.frames[position] if position < len(trace) else None
        while frame is not None:
            for argument in frame.block.arguments:
                if argument.name == name:
                    return self._argument_node(frame, argument.index)
            if frame.kind == "function" or frame.owner is None:
                return None
            frame = trace.frames[frame.owner]
        return None

    def _node_of_ref(self, ref) -> tuple:
        if isinstance(ref, ResultRef):
            return ("result", ref.event, ref.index)
        frame = self.trace.frame_records[ref.frame]
        return self._argument_node(frame, ref.index)

    # -- one step back ---------------------------------------------------------------------------------
    def expand(self, node: tuple, index: tuple) -> "_Reads":
        """What the element node reads (its children), and how to describe it as a step."""
        key = (node, index)
        found = self._expanded.get(key)
        if found is None:
            base = node[1] if node[0] == "part" else node
            kind = base[0]
            if kind == "state":
                found = self._expand_state(node, index)
            elif kind == "argument":
                found = self._expand_argument(node, index)
            elif node[0] == "part":
                found = self._expand_part(node, index)
            else:
                found = self._expand_result(node, index)
            self._expanded[key] = found
        return found

    def _step(self, node, index, kind: str, event: Optional[int], note: str = "", fanin=(),
              peers: int = 0) -> TraceStep:
        trace = self.trace
        name = self._label(node)
        if event is None:
            frame = trace.frame_records[(node[1] if node[0] == "part" else node)[1]]
            op_name, line, source = "", None, ""
        else:
            op = trace.ops[event]
            frame = trace.frames[event]
            op_name, line = op.name, op.pos.line if op.pos is not None else None
            source = describe_location(op.location)
        element = self.element(node, index)
        return TraceStep(event, kind, name, index, value_text(element), op_name, line, source,
                         self._where(frame, event), note, tuple(fanin), peer_reads=peers, finite=_finite(element))

    def _where(self, frame: FrameRecord, event: Optional[int]) -> str:
        """`@f`, `@main while.body #3`, or `@update (iteration 3)` for a frame inside a loop."""
        iterations = self.trace.enclosing_iterations(event) if event is not None else ()
        if iterations and frame.iteration is None:
            return f"{frame.describe()} (iteration {', '.join(map(str, iterations))})"
        return frame.describe()

    def _expand_argument(self, node, index) -> "_Reads":
        return _Reads("argument", [], lambda: self._step(node, index, "argument", None))

    def _expand_result(self, node, index) -> "_Reads":
        trace = self.trace
        _, e, k = node
        op = trace.ops[e]
        followed = self._through_frames(e, k)
        if followed is not None:
            kind, child, note = followed
            return _Reads(kind, [(child, index)], lambda: self._step(node, index, kind, e, note))
        if op.name == READS_TUPLE:
            part = int(op.attributes["index"])
            child = part_of(self.node_of(trace.frames[e], op.operands[0]), (part,))
            note = f"part {part} of the tuple {op.operands[0].name}"
            return _Reads("op", [(child, index)], lambda: self._step(node, index, "op", e, note))
        if explainer_for(op.name) is None:
            note = f"hlodbg cannot trace {op.name}'s elements back to its operands"
            return _Reads("opaque", [], lambda: self._step(node, index, "opaque", e, note), reason=note)
        if self.questions_left is not None:
            if self.questions_left <= 0:
                raise _TooBig(f"the element depends on elements of more than {self.question_limit:,} op instances")
            self.questions_left -= 1
        inputs = [self.array(self.node_of(trace.frames[e], v)) for v in op.operands]
        outputs = as_list(self.store.output(e), len(op.results))
        try:
            answer = provenance(op, index, result=k, operands=inputs, results=outputs, process=self.process,
                                peer_values=self._grid_values(inputs, outputs))
        except ProvenanceError as cannot:
            reason = cannot.message
            return _Reads("opaque", [], lambda: self._step(node, index, "opaque", e, reason), reason=reason)
        groups: dict[int, list] = {}
        peers: list = []
        for source in answer.sources:
            if source.device is not None and source.device != self.process:
                peers.append(source)
            else:
                groups.setdefault(source.operand, []).append(source)
        children = []
        for j, sources in groups.items():
            child = self.node_of(trace.frames[e], op.operands[j])
            children += [(child, s.index) for s in sources]

        def step() -> TraceStep:  # read again when asked: an expansion kept for the search holds no values
            fanin = []
            for j, sources in groups.items():
                indices = [s.index for s in sources]
                read = self.array(self.node_of(trace.frames[e], op.operands[j]))
                fanin.append(Fanin(j, op.operands[j].name, sources[0].role.say(), len(indices),
                                   region_text(indices, np.shape(read)), nonfinite_count(read, indices)))
            note = "; ".join(clipped(line) for line in answer.lines()[:2])
            if peers:
                devices = sorted({(p.device.replica_id, p.device.partition_id) for p in peers})
                note = (note + "; " if note else "") + (f"also reads {len(peers):,} element(s) of the operands on "
                                                         f"device(s) {', '.join(map(str, devices))}: traced within "
                                                         "this device only")
            return self._step(node, index, kind, e, note, fanin, len(peers))

        # No element makes a constant, an iota or a dimension size; a collective's element may come
        # from other devices only (then the walk stops at it).
        kind = "op" if children else "peer" if peers else "constant"
        return _Reads(kind, children, step, peers=[(p.device, p.operand, p.index) for p in peers])

    def _expand_part(self, node, index) -> "_Reads":
        """A part of a tuple an op made: the tuple op's operand, or the part of what a loop, call
        or branch returned."""
        trace = self.trace
        _, (_, e, k), path = node
        op = trace.ops[e]
        if op.name == MAKES_TUPLE:
            child = part_of(self.node_of(trace.frames[e], op.operands[path[0]]), path[1:])
            note = f"part {path[0]} of the tuple is {op.operands[path[0]].name}"
            return _Reads("op", [(child, index)], lambda: self._step(node, index, "op", e, note))
        followed = self._through_frames(e, k)
        if followed is not None:
            kind, child, note = followed
            return _Reads(kind, [(part_of(child, path), index)], lambda: self._step(node, index, kind, e, note))
        note = f"hlodbg cannot trace the parts of {op.name}'s tuple back to its operands"
        return _Reads("opaque", [], lambda: self._step(node, index, "opaque", e, note), reason=note)

    def _expand_state(self, node, index) -> "_Reads":
        """The last iteration before this state whose body changed the element."""
        trace = self.trace
        path = node[2] if node[0] == "part" else ()
        _, cond_id, k = node[1] if node[0] == "part" else node
        asked = cond = trace.frame_records[cond_id]
        owner = cond.owner
        current = self.element(node, index)
        looked, event = 0, owner
        while True:
            if looked >= self.loop_budget:
                raise _TooBig(f"looking for the iteration that last changed {self._label(node)}"
                              f"{list(index)} took more than {self.loop_limit:,} loop iterations")
            looked += 1
            body = cond.previous
            if body is None:
                child = part_of(self.node_of(trace.frames[owner], trace.ops[owner].operands[k]), path)
                note = "no iteration before this one changed it: it is the loop's initial value"
                break
            returned = trace.ops[body.last].operands[k]
            if isinstance(returned.owner, Block) and returned.owner is body.block:
                cond, k = body.previous, returned.index  # passed on as it is
                continue
            before = self._state_element(body.previous, k, path, index)
            if _same(before, current):
                cond = body.previous
                continue
            child, event = part_of(self.node_of(body, returned), path), body.last
            note = (f"last changed in iteration {body.iteration} (from {value_text(before)} to {value_text(current)})"
                    + (f"; the {looked - 1:,} later iteration(s) left it as it was" if looked > 1 else ""))
            break
        self.loop_budget -= looked
        op = trace.ops[owner]

        def step() -> TraceStep:
            return TraceStep(event, "loop", self._label(node), index, value_text(current), op.name,
                             op.pos.line if op.pos is not None else None, describe_location(op.location),
                             self._where(trace.frames[event], event), f"as {asked.describe(False)} sees it: {note}",
                             changed_in=body.iteration if body is not None else None, finite=_finite(current))

        return _Reads("loop", [(child, index)], step)

    # -- the two walks ----------------------------------------------------------------------------------
    def lineage(self, node: tuple, index: tuple, label: str) -> Lineage:
        event = node[1] if node[0] == "result" else -1
        steps: list[TraceStep] = []
        origin = None
        current = (node, index)
        nonfinite = not _finite(self.element(*current))
        try:
            while True:
                if len(steps) >= self.path_limit:
                    self.notes.append(f"the path is longer than {self.path_limit:,} steps: it stops there")
                    break
                reads = self.expand(*current)
                step, children = reads.step(), reads.children
                if nonfinite:
                    bad = [c for c in children if not _finite(self.element(*c))]
                    if not bad and step.kind == "op":
                        origin = len(steps)
                        steps.append(_as_origin(step))
                        break
                    children = bad or children
                steps.append(step)
                if not children:
                    break
                current = self._followed(current, children)
        except _TooBig as big:
            self.notes.append(f"{big}: the path stops there")
        leaves, complete, visited = self._leaves(node, index)
        return Lineage(label, index, value_text(self.element(node, index)), event, steps, leaves, origin, complete,
                       self.notes, visited)

    def _followed(self, current: tuple, children: list) -> tuple:
        """The element the path goes on with: the first that holds the value itself (a select's
        chosen value, a gathered element, a copy), else the first made by an op, else the first."""
        value = self.element(*current)
        for child in children:
            if _same(self.element(*child), value):
                return child
        made = [c for c in children if c[0][0] != "argument" and not self._is_constant(c[0])]
        return (made or children)[0]

    def _is_constant(self, node: tuple) -> bool:
        return node[0] == "result" and not self.trace.ops[node[1]].operands

    def _leaves(self, node: tuple, index: tuple) -> tuple[list[Leaf], bool, int]:
        """Breadth first over every element the element reads, to the leaves, within the bound."""
        seen = {(node, index)}
        queue = deque([(node, index)])
        self.questions_left = self.question_limit
        found: dict[tuple, tuple] = {}  # (kind, what it is in the program) -> (its first node, indices)
        reasons: dict[tuple, str] = {}
        complete = True
        while queue:
            current = queue.popleft()
            try:
                reads = self.expand(*current)
            except _TooBig as big:
                self.notes.append(f"{big}: the leaves listed are those found before (the path is complete)")
                complete = False
                break
            if reads.kind in ("argument", "constant", "opaque"):
                key = (reads.kind, self._leaf_key(current[0]))
                found.setdefault(key, (current[0], []))[1].append(current[1])
                if reads.reason:
                    reasons[key] = reads.reason
            for device, operand, at in reads.peers:  # named where the walk stops, not followed
                key = ("peer", self.trace.ops[current[0][1]], operand, device)
                found.setdefault(key, (current[0], []))[1].append(at)
                reasons[key] = PEER_NOTE
            for child in reads.children:
                if child in seen:
                    continue
                if len(seen) >= self.element_limit:
                    complete = False
                    queue.clear()
                    self.notes.append(f"the element depends on more than {self.element_limit:,} elements: the "
                                      "leaves listed are those found among the first ones (the path is complete)")
                    break
                seen.add(child)
                queue.append(child)
        leaves = []
        for key, (where, indices) in found.items():
            kind = key[0]
            unique = list(dict.fromkeys(indices))
            event = where[1] if where[0] == "result" else None
            if kind == "peer":
                _, op, operand, device = key
                name = (f"{op.operands[operand].name} of device (replica {device.replica_id}, partition "
                        f"{device.partition_id}), read by {self._leaf_name(kind, where)}")
                shape = tuple(op.operands[operand].type.shape)
            else:
                name, shape = self._leaf_name(kind, where), np.shape(self.array(where))
            leaves.append(Leaf(kind, name, len(unique), region_text(unique, shape), event, reasons.get(key, "")))
        order = {"argument": 0, "constant": 1, "peer": 2, "opaque": 3}
        leaves.sort(key=lambda leaf: (order.get(leaf.kind, 4), leaf.name))
        return leaves, complete, len(seen)

    def _leaf_key(self, node: tuple) -> tuple:
        """What a leaf is in the program: a constant every iteration of a loop makes is one leaf,
        listed with the first of its runs the search met."""
        if node[0] == "result":
            return self.trace.ops[node[1]], node[2]
        if node[0] == "part":
            return self._leaf_key(node[1]), node[2]
        return node

    def _leaf_name(self, kind: str, where: tuple) -> str:
        base = where[1] if where[0] == "part" else where
        if base[0] != "result":
            return self._label(where)
        op = self.trace.ops[base[1]]
        line = f" line {op.pos.line}" if op.pos is not None else ""
        return f"{self._label(where)} ({op.name}{line})"

class _Reads:
    """One element node's expansion: its kind, the element nodes it reads, and its step for the
    path (built only for the nodes on the path: the search for leaves needs no words)."""

    __slots__ = ("kind", "children", "peers", "reason", "_build", "_step")

    def __init__(self, kind: str, children: list, build, peers: Sequence = (), reason: str = ""):
        self.kind, self.children, self.peers, self.reason = kind, children, peers, reason
        self._build, self._step = build, None

    def step(self) -> TraceStep:
        if self._step is None:
            self._step = self._build()
        return self._step


class _TooBig(Exception):
    """A bound was passed (the message says which); caught by the walk that met it."""


# -- small helpers -----------------------------------------------------------------------------------


def _element_index(name: str, array: Any, at: Optional[Sequence[int]]) -> tuple[int, ...]:
    if isinstance(array, (tuple, list)):
        raise LineageError(f"{name} is a tuple of {len(array)} values, not a tensor: trace one of its parts (the "
                           "get_tuple_element that reads it)")
    if not isinstance(array, np.ndarray) and not np.isscalar(array):
        raise LineageError(f"{name} is a {type(array).__name__}, not a tensor: it has no elements to trace")
    shape = np.shape(array)
    if at is None:
        if int(np.prod(shape, dtype=np.int64)) != 1:
            raise LineageError(f"{name} has shape {list(shape)}: name one element of it (e.g. --at "
                               f"{','.join('0' for _ in shape)})")
        return (0,) * len(shape)
    index = tuple(int(i) for i in at)
    if len(index) != len(shape) or any(not 0 <= i < n for i, n in zip(index, shape)):
        raise LineageError(f"{list(index)} is not an element of {name} (shape {list(shape)})")
    return index


def _finite(value: Any) -> bool:
    wide = widen(np.asarray(value))
    return wide.dtype.kind not in "fc" or bool(np.isfinite(wide).all())


def _same(a: Any, b: Any) -> bool:
    if type(a) is type(b) and isinstance(a, np.floating) and (a == b or (a != a and b != b)):
        return True  # the common case, answered without making arrays (once per loop iteration)
    x, y = widen(np.asarray(a)), widen(np.asarray(b))
    if x.tobytes() == y.tobytes():
        return True
    return x.dtype.kind in "fc" and bool(np.isnan(x).all() and np.isnan(y).all())


def _as_origin(step: TraceStep) -> TraceStep:
    return replace(step, origin=True)


__all__ = ["Fanin", "LINEAGE_ELEMENT_LIMIT", "LINEAGE_LOOP_LIMIT", "LINEAGE_PATH_LIMIT", "LINEAGE_QUESTION_LIMIT",
           "Leaf", "Lineage", "LineageError", "TraceStep", "first_nonfinite", "trace_element"]
