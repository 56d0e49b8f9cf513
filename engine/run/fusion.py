"""Fused elementwise work for plain runs: chains and trees of elementwise ops run as one step, in
cache-sized blocks, with large work split over the machine's cores.

A run op by op streams every intermediate array through memory: a chain of ten elementwise ops
over 16M floats reads and writes 64 MB ten times. A fused step runs the same chain a block at a
time (a few tens of KiB per operand, so the intermediates stay in the core's cache) and writes only
the values somebody outside the chain reads.

Which ops. An op is fusible when its definition says it is elementwise (family "elementwise",
whatever its dialect: CHLO's functions fuse as StableHLO's do), pure and region-free, it has one result of a static shape, its operands have that shape or are
0-d (select's predicate, clamp's bounds), no quantized types, and the step runs the op's own
registered evaluator (not one a backend wrapped to run it elsewhere or read it from a capture,
whose work is not element by element). Elementwise evaluators work on arrays of any shape, each
element from the same elements of the operands (engine/ops/elementwise.py), so running them on
blocks computes every element with the same functions in the same order; blocks are cut where
numpy's vector loops treat every element as they do in the whole array (see ALIGN), so results
are bit-identical to a run op by op, NaN payloads and signs included. Operands laid out otherwise
(a transposed view, say) run the group unblocked, member after member on whole arrays: exactly a
run op by op.

Groups. Within a block, fusible steps of one shape joined by their values form a group; it runs
where its last member ran, so a value a member makes that a step outside the group reads must be
read only after that (the check uses the function's liveness positions, in which an op nested in
a region sits just before the op owning the region). A member's value read only inside the group is
an intermediate: it never leaves the block being computed. The others are the group's outputs.

Only plain runs use fused steps (the plan's fast steps): a listener, breakpoint or watch runs the
op-by-op steps and sees every op's own value.
"""
from __future__ import annotations

from copy import copy
from math import gcd
from sys import getrefcount
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..ir.core import Operation, Value
from ..ir.errors import ExecutionError, HlodbgError
from ..ir.opset import effect_of, family_of
from ..ir.types import QuantizedType, TensorType
from ..machine.cores import pool as _pool
from ..machine.cores import workers as _workers
from ..ops.registry import EVALUATORS
from .liveness import liveness_of

# Bytes of the widest operand or result in one block. Measured on a 2-core EPYC (1 MiB of L2 a
# core, 32 MiB of L3) over a 12-op chain of f32 ops on 16M elements: 64 KiB blocks gained little
# (every member's evaluator costs a few microseconds of Python per block, as much as its arithmetic
# on 16K elements), 256 KiB-1 MiB blocks ran the chain in 0.7-0.8x the time of a run op by op.
BLOCK_BYTES = 256 * 1024
# Groups over fewer elements are left as steps of their own: op by op, their arrays stay in the
# caches already (the same chain on 1M elements ran 1.15x slower fused, on 2M as fast, on 4M in
# 0.8x the time).
FUSE_FROM_ELEMENTS = 1 << 21
# Work over at least this many elements is split over the cores (a thread's hand-off costs tens of
# microseconds, and each block holds the GIL for its evaluators' Python).
THREADS_FROM_ELEMENTS = 1 << 21
# A group stops growing at this many members (joining checks every member: this bounds the work).
MAX_MEMBERS = 256


def is_fusible(step: Any) -> bool:
    """Whether `step` may join a fused group (see the module docstring)."""
    op: Operation = step.op
    if getattr(step, "foldable", False) or len(op.results) != 1 or op.regions:
        return False
    if family_of(op.name) != "elementwise" or effect_of(op.name) != "pure":
        return False
    if step.evaluator is not EVALUATORS.get(op.name):
        return False
    shape = _static_shape(op.results[0])
    if shape is None:
        return False
    for operand in op.operands:
        operand_shape = _static_shape(operand)
        if operand_shape is None or operand_shape not in (shape, ()):
            return False
    return True


def _static_shape(value: Value) -> Optional[tuple[int, ...]]:
    t = value.type
    if not isinstance(t, TensorType) or not t.is_static or isinstance(t.element, QuantizedType):
        return None
    return tuple(t.shape)


class FusedGroup:
    """What a fused step's evaluator needs: its members' evaluators and calls, how values flow
    between them, its shape and outputs. `op` is its last member (where the group runs)."""

    __slots__ = ("members", "op", "shape", "inputs", "outputs", "program", "output_registers", "dtypes", "block",
                 "reuse")

    def __init__(self, members: list[Any]):
        self.members = members
        self.op = members[-1].op
        self.shape = _static_shape(members[0].op.results[0])
        inside = {step.op for step in members}
        register: dict[Value, int] = {}
        self.inputs: list[Value] = []
        for step in members:
            for value in step.operands:
                if value not in register and value.defining_op not in inside:
                    register[value] = len(self.inputs)
                    self.inputs.append(value)
        self.program: list[tuple[Callable, Any, tuple[int, ...], Operation, tuple[int, ...], tuple[int, ...]]] = []
        self.outputs: list[Value] = []
        self.output_registers: list[int] = []
        reads: list[tuple[int, ...]] = []
        for step in members:
            result = step.op.results[0]
            reads.append(tuple(register[v] for v in step.operands))
            register[result] = len(register)
            if any(user not in inside for user, _ in result.uses):
                self.outputs.append(result)
                self.output_registers.append(register[result])
        # An intermediate dies at the last member reading it: its register is cleared there, and
        # that member may write its own value into it (OpCall.reuse, engine/ops/reuse.py) when
        # it reads it once.
        last_reader = {r: i for i, regs in enumerate(reads) for r in regs}
        kept = set(range(len(self.inputs))) | set(self.output_registers)
        for i, step in enumerate(members):
            regs = reads[i]
            dying = tuple(r for r in dict.fromkeys(regs) if last_reader[r] == i and r not in kept)
            reusable = tuple(j for j, r in enumerate(regs) if r in dying and regs.count(r) == 1)
            self.program.append((step.evaluator, step.call, regs, step.op, dying, reusable))
        self.dtypes = [v.type.numpy_dtype for v in self.outputs]
        widest = max(v.type.numpy_dtype.itemsize for step in members for v in (*step.operands, *step.op.results))
        self.block = max(1, BLOCK_BYTES // widest)
        self.reuse: tuple[int, ...] = ()  # the plain loop's OpCall.reuse: a fused step takes none

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))


class FusedStep:
    """A fused group in the step interface of the plan's plain loop (engine/run/plan.py):
    `evaluator(call, *operands)` returns the outputs' arrays (bare when there is one), read from
    `operand_slots` and written to `result_slots`, and `free` clears the slots it is the last to read."""

    __slots__ = ("evaluator", "call", "op", "operands", "results", "single", "foldable", "folded", "members",
                 "operand_slots", "result_slots", "free", "reuse")

    def __init__(self, group: FusedGroup):
        self.evaluator = run_fused
        self.call = group
        self.op = group.op
        self.operands = group.inputs
        self.results = group.outputs
        self.single = len(group.outputs) == 1
        self.foldable = False
        self.folded = None
        self.members = group.members
        slot_of = {}
        for member in group.members:
            slot_of.update(zip(member.operands, member.operand_slots))
            slot_of.update(zip(member.results, member.result_slots))
        self.operand_slots = tuple(slot_of[v] for v in group.inputs)
        self.result_slots = tuple(slot_of[v] for v in group.outputs)
        self.free = tuple(dict.fromkeys(slot for member in group.members for slot in member.free))
        self.reuse: tuple[int, ...] = ()  # members make their own arrays (the plain loop offers none)


# -- grouping ----------------------------------------------------------------------------------


def fuse(steps: Sequence[Any], plan: Any) -> list[Any]:
    """`steps` (one block's plain-run steps, in program order, with their slots: Plan.fast_block)
    with each group of fusible steps replaced by one fused step, placed where the group's last
    member was; every value is still cleared after the last step that now reads it."""
    steps = list(steps)
    if not steps:
        return steps
    position = liveness_of(plan.module).function(steps[0].op.function).position
    groups = fusible_groups(steps, position)
    if not groups:
        return steps
    last_members = {id(members[-1]): members for members in groups}
    fused_ops = {member.op for members in groups for member in members}
    out: list[Any] = []
    for step in steps:
        if step.op not in fused_ops:
            out.append(step)
        elif id(step) in last_members:
            out.append(FusedStep(FusedGroup(last_members[id(step)])))
    _free_after_last_reads(out)
    return out


def fusible_groups(steps: Sequence[Any], position: dict[Operation, int]) -> list[list[Any]]:
    """The groups of `steps` worth fusing, each a list of member steps in program order.
    `position` numbers the function's ops as its liveness does (FunctionLiveness.position)."""
    group_of: dict[Operation, list[Any]] = {}  # member op -> its group's member steps
    for step in steps:
        if not is_fusible(step):
            continue
        here = position[step.op]
        shape = _static_shape(step.op.results[0])
        joined: list[list[Any]] = []
        for value in step.operands:
            group = group_of.get(value.defining_op)
            if group is not None and all(group is not g for g in joined) \
                    and _static_shape(group[0].op.results[0]) == shape:
                joined.append(group)
        members = [member for group in joined for member in group] + [step]
        if len(members) > MAX_MEMBERS or (joined and not _read_outside_only_after(members, here, position)):
            # Joining would move a value some other step reads before `here` past that read: the
            # step starts a group of its own.
            members = [step]
        members.sort(key=lambda member: position[member.op])
        for member in members:
            group_of[member.op] = members
    groups = []
    for members in {id(g): g for g in group_of.values()}.values():
        size = _static_size(members[0])
        # One op alone gains only the threads; groups too small for blocks stay op by op.
        if (len(members) > 1 or size >= THREADS_FROM_ELEMENTS) and size >= FUSE_FROM_ELEMENTS:
            groups.append(members)
    return groups


def _free_after_last_reads(steps: list[Any]) -> None:
    """A fused step runs where its last member ran, so it may read an operand after the step that
    was its last reader (and cleared it, or could write its result into it): the clearing moves to
    the fused step, and that earlier step no longer offers the operand's buffer."""
    freed_at: dict[int, int] = {}
    for k, step in enumerate(steps):
        for slot in step.free:
            freed_at[slot] = k
    for k, step in enumerate(steps):
        if not isinstance(step, FusedStep):
            continue
        for slot in step.operand_slots:
            at = freed_at.get(slot)
            if at is None or at >= k:
                continue
            earlier = steps[at]
            earlier.free = tuple(s for s in earlier.free if s != slot)
            earlier.reuse = tuple(i for i in earlier.reuse if earlier.operand_slots[i] != slot)
            step.free += (slot,)
            freed_at[slot] = k


def _static_size(step: Any) -> int:
    return int(np.prod(_static_shape(step.op.results[0]), dtype=np.int64))


def _read_outside_only_after(members: list[Any], here: int, position: dict[Operation, int]) -> bool:
    """Whether every op outside `members` reading a member's value comes after position `here`."""
    inside = {member.op for member in members}
    for member in members:
        for user, _ in member.op.results[0].uses:
            if user not in inside and position[user] <= here:
                return False
    return True


# -- evaluation --------------------------------------------------------------------------------


def run_fused(group: FusedGroup, *inputs: Any) -> Any:
    """The group's outputs from its inputs: members whole-array one after the other for small
    work, else block by block (over threads for large work)."""
    shape = group.shape
    workers = _workers() if group.size >= THREADS_FROM_ELEMENTS else 1
    cut = None
    if group.size >= FUSE_FROM_ELEMENTS and (len(group.program) > 1 or workers > 1):
        cut = _cut(shape, inputs, group.block)
    if cut is None:
        # Small work, one op on one core, operands laid out otherwise than in C order (see _cut),
        # or a region body run vectorised on arrays of other shapes: op by op, whole arrays.
        registers = _run_members(group, list(inputs))
        outputs = [registers[r] for r in group.output_registers]
        return outputs[0] if len(outputs) == 1 else outputs
    flat, blocks = cut
    results = [np.empty(shape, dtype) for dtype in group.dtypes]  # owning their data (reusable later)
    outputs = results
    if flat:
        inputs = tuple(a if a.ndim == 0 else a.reshape(-1) for a in inputs)
        outputs = [result.reshape(-1) for result in results]
    if workers > 1:
        share = -(-len(blocks) // workers)
        settings = np.geterr()  # the run's floating-point error handling, for every thread
        pending = [_pool().submit(_run_blocks, group, inputs, outputs, blocks[i:i + share], settings)
                   for i in range(share, len(blocks), share)]
        try:
            _run_blocks(group, inputs, outputs, blocks[:share], None)
        finally:
            for future in pending:
                future.result()
    else:
        _run_blocks(group, inputs, outputs, blocks, None)
    return results[0] if len(results) == 1 else results


def _cut(shape: tuple[int, ...], inputs: Sequence[Any], block: int) -> Optional[tuple[bool, list[slice]]]:
    """How to cut the group's work into blocks: (True, slices of the flattened arrays) when every
    operand is C-contiguous, (False, slices of the first axis) when some are broadcast views in C
    order, or None when blocks could not follow numpy's own loops over the whole arrays (see ALIGN)
    or there would be one block only."""
    flat = True
    for a in inputs:
        if not isinstance(a, np.ndarray):
            return None
        if a.ndim == 0 or (a.flags.c_contiguous and a.shape == shape):
            continue
        if a.shape != shape or not _c_ordered_broadcast(a):
            return None
        flat = False
    size = int(np.prod(shape, dtype=np.int64))
    if flat:
        blocks = _blocks(size, 1, block)
    elif shape[0] > 1:
        blocks = _blocks(shape[0], size // shape[0], block)
    else:
        return None
    return (flat, blocks) if len(blocks) > 1 else None


def _c_ordered_broadcast(array: np.ndarray) -> bool:
    """Whether `array` is a C-contiguous array seen through broadcasting (stride 0 on the axes it
    repeats along): numpy then loops over it, and makes results from it, in C order."""
    expected = array.itemsize
    for length, stride in zip(reversed(array.shape), reversed(array.strides)):
        if stride == 0 or length == 1:
            continue
        if stride != expected:
            return False
        expected *= length
    return True


def _run_blocks(group: FusedGroup, inputs: Sequence[Any], outputs: list[np.ndarray], blocks: list[slice],
                settings: Optional[dict]) -> None:
    if settings is not None:
        with np.errstate(**settings):
            return _run_blocks(group, inputs, outputs, blocks, None)
    registers_out = group.output_registers
    calls = _own_calls(group)
    for index in blocks:
        registers = _run_members(group, [a if a.ndim == 0 else a[index] for a in inputs], calls)
        for output, register in zip(outputs, registers_out):
            output[index] = registers[register]


def _sole_holder_count() -> int:
    """What sys.getrefcount says of a member's operand that only its register and the member's
    operand list hold (the plan's SOLE_HOLDER, counted here: the plan imports this module)."""
    registers = [np.empty(1)]
    operands = [registers[0]]
    return getrefcount(operands[0])


SOLE_HOLDER = _sole_holder_count()


def _own_calls(group: FusedGroup) -> list[Any]:
    """The members' OpCalls for one thread's work: a copy of each that may reuse a dying
    intermediate (its `reuse` changes with every call; the op's own OpCall keeps `()`)."""
    return [copy(call) if reusable else call for _, call, _, _, _, reusable in group.program]


def _run_members(group: FusedGroup, registers: list[Any], calls: Optional[list[Any]] = None) -> list[Any]:
    """Run every member on `registers` (the inputs, then each member's value as it comes)."""
    if calls is None:
        calls = _own_calls(group)
    for (evaluator, _, reads, op, dying, reusable), call in zip(group.program, calls):
        operands = [registers[i] for i in reads]
        try:
            if reusable:
                # Held by its register and `operands` only (a member may return its operand itself).
                call.reuse = tuple(j for j in reusable if getrefcount(operands[j]) <= SOLE_HOLDER)
            registers.append(evaluator(call, *operands))
        except HlodbgError:
            raise
        except Exception as e:
            message = str(e) or type(e).__name__
            if isinstance(e, MemoryError):
                message = f"out of memory ({message})"
            raise ExecutionError(f"{op.name} failed: {message}", op.pos) from e
        for r in dying:
            registers[r] = None
    return registers


# numpy's vectorised loops treat an array's last partial vector (and arrays shorter than a vector)
# apart from the rest, and those paths may pick the other operand's NaN (numpy 2.4 on AVX-512: the
# sum of two NaNs is the first one's in full vectors, the second one's in the tail). numpy loops
# over C-contiguous operands as one run of their flattened elements, and over operands with
# broadcast axes row by row (the axes it cannot merge). So blocks start at multiples of ALIGN
# elements (more than any vector holds) and the last one is never shorter than ALIGN: every
# element then goes through the same path as in the whole array, whatever the arrays' addresses.
ALIGN = 256


def _blocks(rows: int, row_size: int, block: int) -> list[slice]:
    """Slices cutting `rows` rows of `row_size` elements into runs of about `block` elements, each
    starting at a multiple of ALIGN elements, the last at least ALIGN long."""
    unit = ALIGN // gcd(row_size, ALIGN)  # the fewest rows making a multiple of ALIGN elements
    step = max(unit, block // row_size // unit * unit)
    starts = list(range(0, rows, step))
    if len(starts) > 1 and (rows - starts[-1]) * row_size < ALIGN:
        starts.pop()  # the short last run joins the one before it
    ends = starts[1:] + [rows]
    return [slice(start, end) for start, end in zip(starts, ends)]


__all__ = ["FusedGroup", "FusedStep", "fuse", "fusible_groups", "is_fusible", "run_fused"]
