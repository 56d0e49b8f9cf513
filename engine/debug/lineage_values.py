"""Where a value of a recorded run lives and what it holds, for `trace` (lineage.py): the value
nodes a walk back from an element goes through, named and read through the session's stable
surface (the trace's structure, the value store) only.

A value node is ("result", event, k), ("state", cond frame id, k) — a while's carried state k as
the condition of that iteration sees it —, ("argument", frame id, k), an argument the frame holds
itself (the entry function's), or ("part", value node, path): part path[0] of a tuple value, part
path[1] of that... An element node is (value node, index).
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional

import numpy as np

from ..ir.core import Block, Value
from ..ir.errors import HlodbgError
from ..ir.opdefs import has_aliasing_regions
from ..ops.collectives_provenance import GridValues
from ..run.arguments import ArgumentNames
from .trace import ArgRef, FrameRecord, Trace
from .views import as_list

KEPT_VALUES = 64  # values a walk keeps at hand (the value store holds the run's)

# The ops that make and read tuples: their results are followed part by part (a Source names an
# element of a tensor operand, so their provenance is the tuple's structure, not a family's).
MAKES_TUPLE = "stablehlo.tuple"
READS_TUPLE = "stablehlo.get_tuple_element"


class LineageError(HlodbgError):
    """A trace question that cannot be asked (no such value or element, a run that has not made it)."""


class RunValues:
    """The value nodes of one session's run (its main recording, not a replayed body)."""

    def __init__(self, session):
        view = session.timeline.main
        self.session = session
        self.trace: Trace = view.trace
        self.store = view.store
        self.process = session.process
        # The values read last, by node: a walk reads many elements of one value in a row. Kept
        # few, so that values the store dropped to stay in its budget are not all held here.
        self._arrays: OrderedDict[tuple, Any] = OrderedDict()
        self._argument_names = None
        self._offsets: dict = {}  # op -> its event's offset from its frame's first event, last seen

    # -- where a value lives ------------------------------------------------------------------------
    def node_of(self, frame: FrameRecord, value: Value) -> tuple:
        """The value node of `value` as `frame` sees it."""
        owner = value.owner
        if isinstance(owner, Block):
            home = self.trace.frame_of_block(frame, owner)
            if home is None:
                raise LineageError(f"{value.name} is not visible in {frame.describe()}")
            return self._argument_node(home, value.index)
        trace = self.trace
        if owner.parent is frame.block:
            # Each iteration of a loop body runs its ops in the same order: the offset of the op's
            # event in the last frame it was looked up in is checked first (trace.ref scans the
            # frame's events once per frame, which a search through a long loop cannot afford).
            guess = frame.first + self._offsets.get(owner, -1)
            if frame.first <= guess < len(trace.ops) and trace.ops[guess] is owner and trace.frames[guess] is frame:
                if trace.ends[guess] >= 0:
                    return ("result", guess, value.index)
        ref = trace.ref(frame, value)
        if ref is None:
            raise LineageError(f"{value.name} has not been made in {frame.describe()}")
        if owner.parent is frame.block:
            self._offsets[owner] = ref.event - frame.first
        return ("result", ref.event, ref.index)

    def _argument_node(self, frame: FrameRecord, k: int) -> tuple:
        """Argument `k` of `frame`, followed out through calls (a loop's state stays a state node)."""
        trace = self.trace
        while True:
            if frame.owner is None:
                return ("argument", frame.id, k)
            if frame.args is not None:
                passed = self._passed_operands(frame)
                if not passed:
                    return ("argument", frame.id, k)
                outer, value = trace.frames[frame.owner], trace.ops[frame.owner].operands[passed[k]]
                if not isinstance(value.owner, Block):
                    return self.node_of(outer, value)
                frame, k = trace.frame_of_block(outer, value.owner), value.index
                continue
            if frame.kind == "while.body":  # body #i starts from the state cond #i saw
                return ("state", frame.previous.id, k)
            if frame.kind == "while.cond":
                return ("state", frame.id, k)
            outer, value = trace.frames[frame.owner], trace.ops[frame.owner].operands[k]
            if not isinstance(value.owner, Block):
                return self.node_of(outer, value)
            frame, k = trace.frame_of_block(outer, value.owner), value.index

    # -- values ------------------------------------------------------------------------------------
    def array(self, node: tuple) -> Any:
        found = self._arrays.get(node)
        if found is None:
            kind, where, k = node
            if kind == "part":
                found = self.array(where)
                for part in k:
                    found = found[part]
            elif kind == "result":
                op = self.trace.ops[where]
                found = as_list(self.store.output(where), len(op.results))[k]
            elif kind == "argument":
                found = self.store.value(ArgRef(where, k))
            else:
                found = self.array(self._state_source(self.trace.frame_records[where], k))
            self._arrays[node] = found
            if len(self._arrays) > KEPT_VALUES:
                self._arrays.popitem(last=False)
        else:
            self._arrays.move_to_end(node)
        return found

    def element(self, node: tuple, index: tuple) -> Any:
        return np.asarray(self.array(node))[index]

    def _state_source(self, cond: FrameRecord, k: int) -> tuple:
        """The value node holding state `k` at `cond` (through bodies that pass it on as it is)."""
        trace = self.trace
        while True:
            body = cond.previous
            if body is None:  # the first condition sees the loop's operands
                return self.node_of(trace.frames[cond.owner], trace.ops[cond.owner].operands[k])
            returned = trace.ops[body.last].operands[k]
            if isinstance(returned.owner, Block) and returned.owner is body.block:
                cond, k = body.previous, returned.index
                continue
            return self.node_of(body, returned)

    def _grid_values(self, inputs: list, outputs: list):
        """On a grid, what a collective's provenance needs to know the groups: the grid, and this
        device's own values (the trace stays within this device's run)."""
        grid = self.session.grid
        if grid is None:
            return None
        return GridValues(grid, {self.process: (inputs, outputs)}, self.session.module)

    def _state_element(self, cond: FrameRecord, k: int, path: tuple, index: tuple) -> Any:
        """`element(("state", cond.id, k), index)` (of its part `path`) without keeping the value:
        a search through a million iterations reads one element of each."""
        node = self._state_source(cond, k)
        if node[0] != "result" or node in self._arrays:
            return self.element(part_of(node, path), index)
        e = node[1]
        value = self.store.output(e)
        value = value if len(self.trace.ops[e].results) == 1 else value[node[2]]
        for part in path:
            value = value[part]
        return np.asarray(value)[index]

    def _through_frames(self, e: int, k: int) -> Optional[tuple]:
        """(kind, node, note) of result `k` of event `e` when `e` ran its body in frames: a loop's
        final state, or what a call or branch returned; None for an op that computed it itself."""
        trace = self.trace
        if trace.ends[e] <= e:
            return None
        last = trace.frames[trace.ends[e]]
        op = trace.ops[e]
        if last.kind == "while.cond":
            state, iterations = last.block.arguments[k].name, last.iteration or 0
            note = f"the loop's result is its state {state} after {iterations} iteration(s)"
            return "loop", ("state", last.id, k), note
        if not has_aliasing_regions(op.name) and not self._passed_operands(last):
            return None  # a reducer's body run on whole arrays: the op's own provenance answers
        return "call", self.node_of(last, trace.ops[last.last].operands[k]), f"returned by {last.describe()}"

    def _passed_operands(self, frame: FrameRecord) -> list[Optional[int]]:
        """For a frame that holds its arguments (a branch of hlo.conditional): which operand of the
        op that opened it each argument is (the very array passed in), None where none is."""
        if frame.args is None or frame.owner is None or frame.is_vectorised_body:
            return []  # a reducer's body holds slices of many elements at once, never the operands
        e = frame.owner
        inputs = [self.array(self.node_of(self.trace.frames[e], v)) for v in self.trace.ops[e].operands]
        passed = [next((j for j, x in enumerate(inputs) if x is arg), None) for arg in frame.args]
        return passed if passed and all(j is not None for j in passed) else []

    def _label(self, node: tuple) -> str:
        """How a value node is named: `%5`, `%acc` (a loop's state), `arg0 (x)`, `%w part 1`."""
        kind, where, k = node
        if kind == "part":
            return f"{self._label(where)} part {'.'.join(map(str, k))}"
        if kind == "result":
            return self.trace.ops[where].results[k].name
        frame = self.trace.frame_records[where]
        if kind == "state":
            return frame.block.arguments[k].name
        return self._argument_label(frame, k)

    def _argument_label(self, frame: FrameRecord, k: int) -> str:
        if frame.owner is None:
            if self._argument_names is None:
                self._argument_names = ArgumentNames(frame.function)
            names = [n for n in self._argument_names.by_position[k] if n != f"arg{k}"]
            return f"arg{k}" + (f" ({', '.join(names)})" if names else "")
        return f"{frame.block.arguments[k].name} (argument {k} of {frame.describe()})"


def part_of(node: tuple, path: tuple) -> tuple:
    """Part `path` of the value node (the node itself for the empty path)."""
    if not path:
        return node
    if node[0] == "part":
        return ("part", node[1], node[2] + tuple(path))
    return ("part", node, tuple(path))


__all__ = ["LineageError", "MAKES_TUPLE", "READS_TUPLE", "RunValues", "part_of"]
