"""What the IR says about an HLO instruction that the printer needs to find again: whether an op
was added by the lowering (`hlo.implicit`), which op a packing tuple packs, and the shape text
with layout the HLO text gave a value."""
from __future__ import annotations

from typing import Optional

from ...ir.core import Function, Operation, Value
from .print_text import tuple_element_texts

# The IR attribute keeping a shard_map's three HLO instructions as written (lower.py).
MANUAL = "hlo.manual_computation"


def is_implicit(op: Optional[Operation]) -> bool:
    return op is not None and "hlo.implicit" in op.attributes


def pack_source(tuple_op: Operation) -> Optional[Operation]:
    """The op whose results a `stablehlo.tuple` marked `hlo.packs_results` packs (its results are
    named `<instruction>#<i>`; the nested tuples, slices and reshapes between them are implicit)."""
    if "hlo.packs_results" not in tuple_op.attributes:
        return None
    prefix = tuple_op.results[0].name + "#"
    pending = list(tuple_op.operands)
    while pending:
        op = pending.pop(0).defining_op
        if op is None:
            continue
        if is_implicit(op):
            pending.extend(op.operands)
            continue
        if op.results and all(r.name.startswith(prefix) for r in op.results):
            return op
    # An op with no results (a custom-call of shape `()`) packs nothing: the instruction's op is the
    # one just before, written at the same place.
    block = tuple_op.parent
    if block is not None and tuple_op.pos is not None:
        index = block.operations.index(tuple_op)
        for op in reversed(block.operations[:index]):
            if is_implicit(op):
                continue
            if not op.results and op.pos is not None and op.pos.offset == tuple_op.pos.offset:
                return op
            break
    return None


def argument_facts(arg: Value) -> dict:
    """A function argument's attributes (its parameter's HLO facts); none for region arguments."""
    block = arg.owner
    function = block.parent.parent if block.parent is not None else None
    if isinstance(function, Function) and block is function.body:
        return function.arg_attrs(arg.index)
    return {}


def xla_shape_of(value: Value) -> Optional[str]:
    """The shape text with layout the HLO text gave a value: its instruction's, its parameter's,
    or for a parameter of a computation cloned into a region, the operand the op passes it (a
    while's carried tuple, a conditional's branch operand, a shard_map body's local shapes)."""
    op = value.defining_op
    if op is not None:
        source = pack_source(op) or op
        shape = source.attributes.get("xla_shape")
        return str(shape) if shape is not None else None
    facts = argument_facts(value)
    if "xla_shape" in facts:
        return str(facts["xla_shape"])
    block = value.owner
    owner = block.parent.parent if block.parent is not None else None
    if owner is None or isinstance(owner, Function):
        return None
    region = owner.regions.index(block.parent)
    if owner.name == "stablehlo.while" and len(owner.operands) == 1:
        return xla_shape_of(owner.operands[0])
    if owner.name == "hlo.conditional" and value.index == 0 and region + 1 < len(owner.operands):
        return xla_shape_of(owner.operands[region + 1])
    if MANUAL in owner.attributes:
        shape = str(owner.attributes[MANUAL].get("enter_shape", ""))
        shapes = tuple_element_texts(shape) if shape.startswith("(") else [shape]
        return shapes[value.index] if value.index < len(shapes) and shapes[value.index] else None
    return None


__all__ = ["MANUAL", "argument_facts", "is_implicit", "pack_source", "xla_shape_of"]
