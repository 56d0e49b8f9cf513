"""XLA's async syntax sugar (`syntax_sugar_async_ops`, on in its default printer): an async
wrapper of opcode X written as `X-start(...)`, `X-update(%s)`, `X-done(%s)` instead of
`async-start(...), calls=%wrapped` / `async-update` / `async-done`.

The sugared start carries the wrapped instruction's own attributes; XLA's parser builds the
wrapped computation from them (parameters `async_param` from the operands, root `async_op` of
opcode X and of shape element 1 of the start's `((operands...), result, state...)` shape), and its
printer leaves such a computation out of the text. The start keeps the attributes every
instruction may have (sharding, metadata, ...) and the async ones (`async_execution_thread`,
`output_to_operand_aliasing`). `X-update`/`X-done` name the wrapped opcode of the start they read.

Opcodes that end in -start/-done themselves (all-reduce-start, copy-start, ...) are real opcodes,
not sugar: the opcode table knows them. hlodbg also accepts a sugared start with `calls=` naming the
wrapped computation (when X itself takes no `calls=`): the computation's root must be an X.

desugar_async rewrites the parse tree in place into the plain async form and says what was sugar,
so the lowering marks the ops (`hlo.async_sugar` = X) and the function it made (`hlo.async_wrapped`)
and the printer writes the sugar back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.errors import ParseError
from .facts import GENERIC
from .opcodes import TABLE
from .tree import HloAttr, HloComputation, HloInstruction, HloModuleText, HloOperand

_SUFFIXES = {"-start": "async-start", "-update": "async-update", "-done": "async-done"}
# What stays on a sugared start rather than going to the instruction it wraps (hlo_parser.cc:
# the attributes ParseInstructionRhs reads for every instruction, and the async-start's own).
_STARTS_OWN = set(GENERIC) | {"statistics", "origin", "original_value", "parameter_replication",
                              "async_execution_thread", "output_to_operand_aliasing"}


@dataclass
class AsyncSugar:
    """What desugar_async found: the wrapped opcode of each sugared instruction (by id) and the
    names of the computations it built from sugared starts."""

    wrapped: dict[int, str] = field(default_factory=dict)
    built: set[str] = field(default_factory=set)


def sugar_parts(opcode: str):
    """(wrapped opcode, plain async opcode) when `opcode` is the sugar of an async wrapper."""
    if opcode in TABLE:
        return None
    for suffix, plain in _SUFFIXES.items():
        base = opcode.removesuffix(suffix)
        if base != opcode and base in TABLE and not base.startswith("async-") and base != "parameter":
            return base, plain
    return None


def desugar_async(tree: HloModuleText) -> AsyncSugar:
    sugar = AsyncSugar()
    if not any(sugar_parts(i.opcode) for c in tree.computations for i in c.instructions):
        return sugar
    names = {c.name for c in tree.computations}
    out: list[HloComputation] = []
    for comp in tree.computations:
        wrapped_of: dict[str, str] = {}  # async instruction name -> the opcode it wraps
        for inst in comp.instructions:
            parts = sugar_parts(inst.opcode)
            if inst.opcode == "async-start" and "calls" in inst.attrs:
                callee = _computation(tree, inst.attrs["calls"])
                if callee is not None:
                    wrapped_of[inst.name] = callee.root.opcode
            elif inst.opcode in ("async-update",) and inst.operands:
                wrapped_of[inst.name] = wrapped_of.get(inst.operands[0].name, "")
            if parts is None:
                continue
            base, plain = parts
            if plain == "async-start":
                if "calls" in inst.attrs and (TABLE[base].callee or (None,))[0] != "calls":
                    callee = _computation(tree, inst.attrs["calls"])
                    if callee is not None and callee.root.opcode != base:
                        raise ParseError(f"'{inst.name}' is {inst.opcode}, but the computation it calls "
                                         f"('{callee.name}') has a {callee.root.opcode} root, not a {base}",
                                         inst.attrs["calls"].pos)
                else:
                    built = _wrapped_computation(inst, base, names)
                    names.add(built.name)
                    sugar.built.add(built.name)
                    out.append(built)
            else:
                if len(inst.operands) != 1:
                    raise ParseError(f"{inst.opcode} '{inst.name}' takes one operand, the async op it "
                                     f"continues", inst.opcode_pos)
                started = wrapped_of.get(inst.operands[0].name)
                if started is None:
                    raise ParseError(f"{inst.opcode} '{inst.name}': '{inst.operands[0].name}' is not an "
                                     f"async-start or async-update", inst.operands[0].pos)
                if started and started != base:
                    raise ParseError(f"{inst.opcode} '{inst.name}': '{inst.operands[0].name}' wraps a "
                                     f"{started}, not a {base}", inst.opcode_pos)
            wrapped_of[inst.name] = base
            sugar.wrapped[id(inst)] = base
            inst.opcode = plain
        out.append(comp)
    tree.computations[:] = out
    return sugar


def _computation(tree: HloModuleText, attr: HloAttr):
    return tree.computation(attr.text.strip().lstrip("%"))


def _wrapped_computation(start: HloInstruction, base: str, taken: set[str]) -> HloComputation:
    """The computation XLA's parser builds for a sugared start: one parameter per operand, the
    wrapped instruction as root; the start keeps its own attributes and calls it."""
    shape = start.shape
    if (shape is None or not shape.is_tuple or len(shape.elements) < 2 or not shape.elements[0].is_tuple
            or len(shape.elements[0].elements) != len(start.operands)):
        written = shape.text(False) if shape is not None else "none written"
        raise ParseError(f"{base}-start '{start.name}' has shape {written}; an async start's shape "
                         f"is ((operands...), result, state...) with one element per operand in the first",
                         (shape.pos if shape is not None else None) or start.pos)
    name = _fresh("async_wrapped", taken)
    params, param_names = [], set()
    for i, operand_shape in enumerate(shape.elements[0].elements):
        param = HloInstruction(_fresh("async_param", param_names), operand_shape, "parameter", [], {}, start.pos,
                               start.opcode_pos, start.end, literal=str(i), literal_pos=start.pos)
        param_names.add(param.name)
        params.append(param)
    wrapped_attrs = {k: a for k, a in start.attrs.items() if k not in _STARTS_OWN}
    for k in wrapped_attrs:
        del start.attrs[k]
    root = HloInstruction("async_op", shape.elements[1], base,
                          [HloOperand(p.name, start.pos) for p in params], wrapped_attrs, start.pos,
                          start.opcode_pos, start.end, is_root=True)
    start.attrs["calls"] = HloAttr("calls", name, start.opcode_pos)
    return HloComputation(name, [*params, root], root, start.pos, start.end)


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 0
    while name in taken:
        n += 1
        name = f"{base}.{n}"
    return name


__all__ = ["AsyncSugar", "desugar_async", "sugar_parts"]
