"""Small in-place edits of the IR for the steps that rewrite a lowered module (shardy.py):
follow tuple plumbing, replace a value's uses, insert and erase ops, clone a block."""
from __future__ import annotations

from ...ir.core import Block, Operation, Region, Value


def instruction_name(op: Operation) -> str:
    """The HLO instruction an op came from (packed results are named `name#i`)."""
    return value_name(op.results[0]).split("#")[0] if op.results else op.name


def value_name(value: Value) -> str:
    """A value's name as HLO writes it (the MLIR frontend keeps the `%`)."""
    return value.name.lstrip("%")


# A custom_call's own attributes; the others on it are HLO facts (xla_shape, metadata, sharding...).
CUSTOM_CALL_OWN = ("call_target_name", "has_side_effect", "backend_config", "called_computations",
                   "output_operand_aliases", "api_version", "operand_layouts", "result_layouts")


def custom_call_facts(op: Operation, consumed_frontend_attributes: tuple[str, ...]) -> dict:
    """The HLO facts of a custom call an op replaces, without the frontend attributes it consumed."""
    facts = {k: v for k, v in op.attributes.items() if k not in CUSTOM_CALL_OWN}
    front = {k: v for k, v in (facts.pop("mhlo.frontend_attributes", None) or {}).items()
             if k not in consumed_frontend_attributes}
    if front:
        facts["mhlo.frontend_attributes"] = front
    return facts


def unpacked(value: Value) -> Value:
    """The value a chain of get_tuple_element-of-tuple stands for (`gte(tuple(a, b), 1)` is b)."""
    while True:
        op = value.defining_op
        if op is None or op.name != "stablehlo.get_tuple_element":
            return value
        source = op.operands[0].defining_op
        if source is None or source.name != "stablehlo.tuple":
            return value
        value = source.operands[int(op.attributes["index"])]


def replace_uses(old: Value, new: Value) -> None:
    for user, index in old.uses:
        user.operands[index] = new
        new.uses.append((user, index))
    old.uses = []


def erase(op: Operation) -> None:
    """Remove `op`, whose results nothing uses any more, from its block and its operands' uses."""
    used = [value.name for value in op.results if value.uses]
    if used:
        raise ValueError(f"{op} cannot be erased: {', '.join(used)} still used")
    for value in {id(v): v for v in op.operands}.values():
        value.uses = [(user, i) for user, i in value.uses if user is not op]
    op.parent.operations.remove(op)
    op.parent = None


def erase_unused(ops: list[Operation]) -> None:
    """Erase those of `ops` nothing uses, users before the ops they use (`ops` in block order)."""
    for op in reversed(ops):
        if op.parent is not None and not any(value.uses for value in op.results):
            erase(op)


def insert_before(anchor: Operation, op: Operation) -> None:
    block = anchor.parent
    block.operations.insert(next(i for i, o in enumerate(block.operations) if o is anchor), op)
    op.parent = block


def clone_block(block: Block, mapping: dict[int, Value]) -> Block:
    """A copy of `block`: its arguments, ops and nested regions. `mapping` (id of an old value →
    its copy) is filled with the block's own values."""
    copy = Block(block.label)
    for argument in block.arguments:
        new = copy.add_argument(argument.name, argument.type, argument.pos)
        new.location = argument.location
        mapping[id(argument)] = new
    for op in block.operations:
        copy.append(clone_op(op, mapping))
    return copy


def clone_op(op: Operation, mapping: dict[int, Value]) -> Operation:
    regions = [Region([clone_block(b, mapping) for b in region.blocks]) for region in op.regions]
    operands = [mapping.get(id(v), v) for v in op.operands]
    copy = type(op)(op.name, operands, list(op.result_types), dict(op.attributes), regions, op.location, op.pos,
                    [v.name for v in op.results])
    copy.successors = list(op.successors)
    copy.property_names = op.property_names
    for old, new in zip(op.results, copy.results):
        new.pos = old.pos
        new.location = old.location
        mapping[id(old)] = new
    return copy


__all__ = ["CUSTOM_CALL_OWN", "clone_block", "clone_op", "custom_call_facts", "erase", "erase_unused",
           "insert_before", "instruction_name", "replace_uses", "unpacked", "value_name"]
