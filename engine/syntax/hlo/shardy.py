"""JAX's shard_map in pre-optimization HLO: Shardy's round-trip form, lowered to the
`sdy.manual_computation` the MLIR frontend reads for the same program.

XLA prints a manual computation as three instructions and the tuple plumbing between them:

    enter = (local shapes) custom-call(globals...), custom_call_target="xla.sdy.GlobalToLocalShape",
            frontend_attributes={xla.sdy.in_shardings="#sdy.sharding_per_value<...>", xla.sdy.manual_axes=...}
    body  = (local results) call(get-tuple-element(enter)...), to_apply=xla.sdy.manual_computation_body.N
    exit  = (global shapes) custom-call(get-tuple-element(body)...), custom_call_target="xla.sdy.LocalToGlobalShape",
            frontend_attributes={xla.sdy.out_shardings=..., xla.sdy.manual_axes=...}

and the module's meshes as the header's frontend attribute `xla.sdy.meshes={mesh = #sdy.mesh<...>}`.
The shardings are MLIR attribute texts; the MLIR attribute reader reads them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ...ir.core import Operation
from ...ir.errors import HlodbgError, ParseError
from .tree import HloAttr, HloComputation, HloInstruction

ENTER = "xla.sdy.GlobalToLocalShape"
EXIT = "xla.sdy.LocalToGlobalShape"
BODY_PREFIX = "xla.sdy.manual_computation_body"
MESHES = "xla.sdy.meshes"


@dataclass
class ManualComputation:
    enter: HloInstruction
    call: HloInstruction
    exit: HloInstruction
    body: str  # the body computation's name
    absorbed: frozenset[str]  # instructions folded into the op: enter, call and their get-tuple-elements
    reads: tuple[list[HloInstruction], list[HloInstruction]] = ([], [])  # those get-tuple-elements


def read_mlir_attribute(text: str, where: HloAttr, what: str) -> Any:
    """An MLIR attribute written inside an HLO attribute value; errors point at that value."""
    from ..mlir.value_parser import ValueParser

    try:
        reader = ValueParser(text, where.pos.source.name)
        value = reader.parse_attribute(what)
        reader.skip_ws()
        if reader.pos != len(text):
            reader.error(f"unexpected text after {what}")
        return value
    except HlodbgError as e:
        raise ParseError(f"{what} in {where.name}: {e.message}", where.pos) from None


def mesh_ops(header: dict[str, HloAttr], decode: Callable[[str, HloAttr], Any]) -> list[Operation]:
    """`sdy.mesh` ops for the meshes the header's `xla.sdy.meshes` frontend attribute declares."""
    attr = header.get("frontend_attributes")
    if attr is None:
        return []
    text = decode("frontend_attributes", attr).get(MESHES)
    if text is None:
        return []
    meshes = read_mlir_attribute(text, attr, "the mesh dictionary of xla.sdy.meshes")
    if not isinstance(meshes, dict):
        raise ParseError(f"{MESHES} is not a dictionary of meshes", attr.pos)
    return [Operation("sdy.mesh", [], [], {"sym_name": str(name), "mesh": mesh}, pos=attr.pos)
            for name, mesh in meshes.items()]


def find_manual_computations(comp: HloComputation, decode: Callable[[str, HloAttr], Any]) -> dict[str, ManualComputation]:
    """The manual computations of a computation, by the name of their exit instruction. A pattern
    whose pieces are used elsewhere is left alone (its custom calls then say what they are)."""
    by_name = {i.name: i for i in comp.instructions}
    users: dict[str, list[HloInstruction]] = {}
    for inst in comp.instructions:
        for operand in inst.operands:
            users.setdefault(operand.name, []).append(inst)

    def target(inst: HloInstruction) -> Optional[str]:
        attr = inst.attrs.get("custom_call_target")
        return decode("string", attr) if inst.opcode == "custom-call" and attr is not None else None

    def element_reads(inst: HloInstruction) -> Optional[list[HloInstruction]]:
        """inst's users when they are get-tuple-elements 0..n-1 in order, one each."""
        reads = users.get(inst.name, [])
        if any(r.opcode != "get-tuple-element" or "index" not in r.attrs for r in reads):
            return None
        reads = sorted(reads, key=lambda r: decode("int", r.attrs["index"]))
        if [decode("int", r.attrs["index"]) for r in reads] != list(range(len(reads))):
            return None
        return reads

    found: dict[str, ManualComputation] = {}
    for call in comp.instructions:
        if call.opcode != "call" or "to_apply" not in call.attrs:
            continue
        body = decode("computation", call.attrs["to_apply"])
        if not str(body).startswith(BODY_PREFIX):
            continue
        sources = [by_name.get(o.name) for o in call.operands]
        if not sources or any(s is None or s.opcode != "get-tuple-element" or not s.operands for s in sources):
            continue
        enter = by_name.get(sources[0].operands[0].name)
        if enter is None or target(enter) != ENTER or element_reads(enter) != sources:
            continue
        results = element_reads(call)
        if not results:
            continue
        exits = users.get(results[0].name, [])
        if len(exits) != 1 or target(exits[0]) != EXIT:
            continue
        exit_ = exits[0]
        if [o.name for o in exit_.operands] != [r.name for r in results]:
            continue
        if any(users.get(r.name, []) != [exit_] for r in results):
            continue
        absorbed = frozenset([enter.name, call.name, *(s.name for s in sources), *(r.name for r in results)])
        found[exit_.name] = ManualComputation(enter, call, exit_, str(body), absorbed, (sources, results))
    return found


def manual_computation_attributes(manual: ManualComputation, decode: Callable[[str, HloAttr], Any]) -> dict:
    """in_shardings, out_shardings and manual_axes from the enter and exit frontend attributes."""
    out = {}
    for inst, key, ir in ((manual.enter, "xla.sdy.in_shardings", "in_shardings"),
                          (manual.exit, "xla.sdy.out_shardings", "out_shardings"),
                          (manual.enter, "xla.sdy.manual_axes", "manual_axes")):
        attr = inst.attrs.get("frontend_attributes")
        text = decode("frontend_attributes", attr).get(key) if attr is not None else None
        if text is None:
            raise ParseError(f"{inst.opcode} '{inst.name}' of a manual computation has no {key} frontend "
                             f"attribute", inst.pos)
        out[ir] = read_mlir_attribute(text, attr, key)
    return out


__all__ = ["BODY_PREFIX", "ManualComputation", "find_manual_computations", "manual_computation_attributes",
           "mesh_ops", "read_mlir_attribute"]
