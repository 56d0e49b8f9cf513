"""Liveness of a module's values in program order: where each value is made and where it is last
needed. One analysis with two users: the memory profile (run/memory_profile.py: the bytes a device
holds at every op, and its peak) and a run that frees every buffer after its last use.

Program order. The ops of a function, nested ones included, get positions 0..n-1 in the order they
*complete*: the ops of an op's regions come before the op itself (a while's cond and body ops, then
the while), because the op's results exist only once its regions have run. So an op's regions
cover the contiguous positions `first[p]..p-1`, and every value is live over one contiguous range
of positions `start..end`:

- a function's or region's arguments from the first position of their block; an op's results from
  the op's own position;
- up to the position of the last op of the value's own block that uses it, where a use inside a
  region counts as a use by the region's owner in that block: a value a region captures (read by
  every iteration of a while's body, say) stays live until its owner completes, and a region's
  block arguments and values (loop-carried values included) are live within the region only;
- values a block's terminator hands back (a function's or region's results) live until that
  terminator: the consumer — the caller, or the owner op whose results they become — takes them;
- a result nothing uses is live at its own op (it is still written) and dies there;
- a tuple keeps the values it was made of alive as long as it is itself live (a tuple value is only
  the list of its elements' buffers), and an element as long as a get_tuple_element reading it out
  is (that result is the element's buffer again: `reads_built_tuple`).

`last_uses(op)` gives, for every op, the values of its block whose life ends with it (what a run
may drop after the op), and `unused_arguments(block)` the block arguments nothing reads. Whether a
value takes bytes of its own (an entry argument, a result) or aliases another buffer (a call's or
a while's region arguments, a scalar combiner's values) is the memory profile's business; the
liveness is only about positions.
"""
from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

from ..ir.core import Block, Function, Module, Operation, Value
from ..ir.errors import ExecutionError
from ..ir.types import TupleType


class FunctionLiveness:
    """Positions and live ranges of every value of one function (its regions included; not the
    functions it calls, which have their own)."""

    def __init__(self, function: Function):
        if function.is_declaration:
            raise ExecutionError(f"@{function.sym_name} is only declared; it has no body to analyse", function.pos)
        self.function = function
        self.ops: list[Operation] = []  # by position: every op at its completion
        self.first: list[int] = []  # by position: the first position of the op's subtree (its regions' ops)
        self.position: dict[Operation, int] = {}
        self.values: list[Value] = []  # every value the function defines: arguments, results, region arguments
        self.index: dict[Value, int] = {}
        self.block_of: list[Block] = []  # by value: the block it belongs to
        self._last_uses: dict[Operation, tuple[Value, ...]] = {}
        self._unused: dict[Block, tuple[Value, ...]] = {}
        self._number(function.body)
        starts: list[int] = []
        ends: list[int] = []
        self._ranges(function.body, starts, ends)
        self.start = np.asarray(starts, np.int64)
        self.end = np.asarray(ends, np.int64)

    # -- queries ------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.ops)

    @property
    def last_uses_table(self) -> dict[Operation, tuple[Value, ...]]:
        """op -> last_uses(op), for a loop that looks it up once per op (an op absent: nothing dies there)."""
        return self._last_uses

    def last_uses(self, op: Operation) -> tuple[Value, ...]:
        """The values of `op`'s block whose last use is `op` (its own unused results included): a
        run may drop them once `op` completes. Values of enclosing blocks never end inside a region."""
        return self._last_uses.get(op, ())

    def unused_arguments(self, block: Block) -> tuple[Value, ...]:
        """The arguments of `block` (of this function or one of its regions) that nothing reads."""
        return self._unused.get(block, ())

    def live_range(self, value: Value) -> tuple[int, int]:
        i = self.index[value]
        return int(self.start[i]), int(self.end[i])

    def live_at(self, position: int) -> np.ndarray:
        """Indices (into `values`) of the values live at `position`."""
        return np.flatnonzero((self.start <= position) & (self.end >= position))

    # -- construction ------------------------------------------------------------------------
    def _number(self, block: Block) -> None:
        """Positions in completion order (an op's regions before the op)."""
        for op in block.operations:
            first = len(self.ops)
            for region in op.regions:
                if len(region.blocks) > 1:
                    raise ExecutionError(f"{op.name}: a region with {len(region.blocks)} blocks; the memory "
                                         f"analysis follows single-block regions, as StableHLO has them", op.pos)
                for inner in region.blocks:
                    self._number(inner)
            self.position[op] = len(self.ops)
            self.first.append(first)
            self.ops.append(op)

    def _add(self, value: Value, block: Block, starts: list[int], ends: list[int], start: int, end: int) -> None:
        self.index[value] = len(self.values)
        self.values.append(value)
        self.block_of.append(block)
        starts.append(start)
        ends.append(end)

    def _ranges(self, block: Block, starts: list[int], ends: list[int]) -> None:
        ops = block.operations
        if not ops:
            return
        block_start = self.first[self.position[ops[0]]]
        # Where each value of this block is last needed, in block terms (an op of this block), found
        # from the last op back so that a tuple's own end is known before its elements'.
        ending: dict[Value, Optional[Operation]] = {}
        for op in reversed(ops):
            for value in op.results:
                ending[value] = self._last_user(value, block, ending) or op
        for value in block.arguments:
            ending[value] = self._last_user(value, block, ending)
        unused = tuple(v for v in block.arguments if ending[v] is None)
        if unused:
            self._unused[block] = unused
        for value in block.arguments:
            end_op = ending[value]
            self._add(value, block, starts, ends, block_start,
                      self.position[end_op] if end_op is not None else block_start)
        for op in ops:
            for region in op.regions:
                for inner in region.blocks:
                    self._ranges(inner, starts, ends)
            here = self.position[op]
            for value in op.results:
                self._add(value, block, starts, ends, here, self.position[ending[value]])
        dying: dict[Operation, list[Value]] = {}
        for value, end_op in ending.items():
            if end_op is not None:
                dying.setdefault(end_op, []).append(value)
        for op, values in dying.items():
            self._last_uses[op] = tuple(values)

    def _last_user(self, value: Value, block: Block, ending: dict) -> Optional[Operation]:
        """The latest op of `block` that uses `value` (directly, in one of its regions, or through a
        tuple made of it), or None when nothing does."""
        latest: Optional[Operation] = None
        for user, operand_index in value.uses:
            op = _ancestor_in(user, block)
            if op is None:
                raise ExecutionError(f"{value.name or 'a value'} is used outside the block that defines it "
                                     f"({user.name})", user.pos)
            if user is op and op.results and all(isinstance(r.type, TupleType) for r in op.results):
                # A tuple holds its elements' buffers: they live as long as it does, and as long as
                # an element read out of it (HLO's get-tuple-element) does.
                for tuple_value in op.results:
                    reads = element_reads(tuple_value, operand_index) if user.name == "stablehlo.tuple" else []
                    holders = [tuple_value] + [read.results[0] for read in reads]
                    for holder in holders:
                        held = ending.get(holder)
                        if held is not None and self.position[held] > self.position[op]:
                            op = held
            if latest is None or self.position[op] > self.position[latest]:
                latest = op
        return latest


def element_reads(tuple_value: Value, index: int) -> list[Operation]:
    """The stablehlo.get_tuple_element ops reading element `index` of `tuple_value`."""
    return [user for user, _ in tuple_value.uses
            if user.name == "stablehlo.get_tuple_element" and int(user.attributes.get("index", -1)) == index]


def reads_built_tuple(value: Value) -> bool:
    """Whether `value` reads an element out of a tuple built in the program from that element
    (HLO's get-tuple-element of a tuple instruction): the element's own buffer, not a new one."""
    op = value.defining_op
    if op is None or op.name != "stablehlo.get_tuple_element":
        return False
    built = op.operands[0].defining_op
    return built is not None and built.name == "stablehlo.tuple"


def _ancestor_in(op: Operation, block: Block) -> Optional[Operation]:
    """`op` itself if it is in `block`, else the op of `block` whose regions hold it."""
    while op is not None and op.parent is not block:
        op = op.parent_op
    return op


class Liveness:
    """The liveness of every function of a module, worked out once per function on demand."""

    def __init__(self, module: Module):
        self.module = module
        self._functions: dict[str, FunctionLiveness] = {}

    def function(self, function: "Function | str") -> FunctionLiveness:
        name = function if isinstance(function, str) else function.sym_name
        found = self._functions.get(name)
        if found is None:
            target = self.module.function(name) if isinstance(function, str) else function
            found = self._functions[name] = FunctionLiveness(target)
        return found


_CACHE: "weakref.WeakKeyDictionary[Module, Liveness]" = weakref.WeakKeyDictionary()


def liveness_of(module: Module) -> Liveness:
    """The module's Liveness, shared by every user of the same module object."""
    found = _CACHE.get(module)
    if found is None:
        found = _CACHE[module] = Liveness(module)
    return found


__all__ = ["FunctionLiveness", "Liveness", "liveness_of"]
