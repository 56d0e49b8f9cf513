"""The few ops the capture transform adds to a module, made as IR and placed in a block.

Every op made here is plain StableHLO that hlodbg's printer writes and XLA compiles: splat zero
constants (a loop buffer's start, the value an untaken branch returns), reshapes (a value as
one row of a buffer, or one device's piece of a per-device result), dynamic_update_slice (a row
written at the iteration's index), add and minimum (the iteration counter), and clones of ops
(a loop condition's ops, run again where their values can leave the loop).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from ...ir.attributes import DenseElements
from ...ir.core import Block, Operation, Region, Value
from ...ir.types import IntegerType, TensorType

I64 = TensorType((), IntegerType(64))


class Cursor:
    """Where new ops go: before `anchor` in `block`, or at the block's end when there is none."""

    def __init__(self, block: Block, anchor: Optional[Operation]):
        self.block = block
        self.anchor = anchor

    @classmethod
    def before(cls, op: Operation) -> "Cursor":
        return cls(op.parent, op)

    @classmethod
    def before_terminator(cls, block: Block) -> "Cursor":
        return cls(block, block.terminator)

    def add(self, op: Operation) -> Value:
        operations = self.block.operations
        index = len(operations) if self.anchor is None else operations.index(self.anchor)
        operations.insert(index, op)
        op.parent = self.block
        return op.results[0] if op.results else None

    def op(self, name: str, operands: Sequence[Value], result: TensorType, hint: str = "cap") -> Value:
        return self.add(Operation(name, list(operands), [result], result_names=[f"%{hint}"]))

    def zeros(self, t: TensorType, hint: str = "cap_zero") -> Value:
        dtype = t.numpy_dtype
        splat = np.broadcast_to(np.zeros((), dtype), tuple(t.shape))  # strides 0: printed as dense<0>
        return self.add(Operation("stablehlo.constant", [], [t], {"value": DenseElements(t, splat)},
                                  result_names=[f"%{hint}"]))

    def integer(self, value: int, hint: str = "cap_i") -> Value:
        array = np.array(value, np.int64)
        array.flags.writeable = False
        return self.add(Operation("stablehlo.constant", [], [I64], {"value": DenseElements(I64, array)},
                                  result_names=[f"%{hint}"]))

    def reshape(self, value: Value, shape: Sequence[int]) -> Value:
        return self.op("stablehlo.reshape", [value], value.type.with_shape(shape), "cap_row")


def with_leading(t: TensorType, dims: Sequence[int]) -> TensorType:
    return TensorType(tuple(dims) + tuple(t.shape), t.element)


def add_result(op: Operation, t: TensorType, groups: dict) -> Value:
    """A new last result of `op`. The op's results are renamed as one group (`%cap_resultsN#i`,
    N from `groups`, op -> name, kept by one transform): a group's name printed apart for some
    results only would not be valid MLIR (`%1_0`)."""
    value = Value("", t, op, len(op.results))
    op.results.append(value)
    base = groups.get(op)
    if base is None:
        base = groups[op] = f"%cap_results{len(groups)}"
    for i, result in enumerate(op.results):
        result.name = f"{base}#{i}"
    return value


def add_operand(op: Operation, value: Value) -> None:
    value.uses.append((op, len(op.operands)))
    op.operands.append(value)


def clone_ops(ops: Sequence[Operation], mapping: dict, cursor: Cursor, originals: dict) -> list[Operation]:
    """Copies of `ops` (regions included) placed at `cursor`, their operands renamed through
    `mapping` (old value -> new value, filled with the copies' results as they are made);
    `originals` learns, for every copy, the op of the original program it stands for."""
    made = []
    for op in ops:
        copy = _clone(op, mapping, originals)
        cursor.add(copy)
        made.append(copy)
    return made


def _clone(op: Operation, mapping: dict, originals: dict) -> Operation:
    regions = []
    for region in op.regions:
        blocks = []
        for block in region.blocks:
            new = Block(block.label)
            for argument in block.arguments:
                mapping[argument] = new.add_argument(argument.name, argument.type)
            for inner in block.operations:
                new.append(_clone(inner, mapping, originals))
            blocks.append(new)
        regions.append(Region(blocks))
    copy = Operation(op.name, [mapping.get(v, v) for v in op.operands], [v.type for v in op.results],
                     dict(op.attributes), regions, op.location, op.pos, [v.name for v in op.results])
    copy.property_names = op.property_names
    mapping.update(zip(op.results, copy.results))
    if op in originals:
        originals[copy] = originals[op]
    return copy
