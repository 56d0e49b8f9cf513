"""What every HLO instruction may carry besides its opcode's own attributes (hlo_text.md §3:
sharding, frontend_attributes, metadata, backend_config, control-predecessors, statistics, ...),
kept on the op as discardable attributes the printer gives back; and the producer location built
from `metadata` and the module's stack-frame tables, shaped like JAX's MLIR locations so
locations.name_stack() and user_frame() read both languages alike.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from ...ir.attributes import ArrayAttr
from ...ir.locations import CallSiteLoc, FileLineColLoc, Location, NameLoc
from .tree import HloAttr, HloShape, StackFrameTables

# Attributes any instruction may have, and the IR attribute each is kept in.
GENERIC = {
    "sharding": "mhlo.sharding",
    "frontend_attributes": "mhlo.frontend_attributes",
    "metadata": "hlo.metadata",
    "backend_config": "hlo.backend_config",
    "control-predecessors": "hlo.control_predecessors",
}


def shape_fact(shape: HloShape) -> dict:
    """`xla_shape`: the full shape text, when the text gave a layout (or a tuple element did)."""
    full = shape.text(True)
    return {"xla_shape": full} if full != shape.text(False) else {}


def generic_facts(attrs: dict[str, HloAttr], decode: Callable[[str, HloAttr], Any]) -> dict:
    """The IR attributes of the generic HLO attributes present (sharding validated by its decoder)."""
    out: dict[str, Any] = {}
    for name, ir in GENERIC.items():
        attr = attrs.get(name)
        if attr is None:
            continue
        if name == "sharding":
            out[ir] = str(decode("sharding", attr))
        elif name == "frontend_attributes":
            out[ir] = {str(k): str(v) for k, v in decode("frontend_attributes", attr).items()}
        elif name == "control-predecessors":
            out[ir] = ArrayAttr(str(n) for n in decode("instruction_names", attr))
        else:
            out[ir] = attr.text
    return out


def location(metadata: Optional[dict], frames: Optional[StackFrameTables]) -> Optional[Location]:
    """`NameLoc(op_name, <frame chain or FileLineColLoc>)` from decoded metadata; None without any."""
    if not metadata:
        return None
    where: Optional[Location] = None
    frame_id = metadata.get("stack_frame_id")
    if frame_id and frames is not None:
        where = frame_chain(int(frame_id), frames)
    if where is None and metadata.get("source_file"):
        where = FileLineColLoc(
            str(metadata["source_file"]), int(metadata.get("source_line", 0)),
            int(metadata.get("source_column", 0) or 0),
            _optional_int(metadata.get("source_end_line")), _optional_int(metadata.get("source_end_column")),
        )
    name = metadata.get("op_name")
    if name:
        return NameLoc(str(name), where)
    return where


def _optional_int(v: Any) -> Optional[int]:
    return None if v is None else int(v)


def frame_chain(frame_id: int, frames: StackFrameTables) -> Optional[Location]:
    """The frame and its callers as CallSiteLoc(frame, caller chain), innermost first, each frame
    `NameLoc(function, FileLineColLoc)` as JAX writes them. Printed parent ids are parent + 1, so
    a parent of 0 ends the chain; a cycle ends it too."""
    chain: list[Location] = []
    seen: set[int] = set()
    while frame_id and frame_id in frames.frames and frame_id not in seen:
        seen.add(frame_id)
        location_id, parent = frames.frames[frame_id]
        place = frames.file_locations.get(location_id)
        if place is not None:
            file = frames.file_names.get(place.file_name_id, "<unknown>")
            function = frames.function_names.get(place.function_name_id, "")
            pos = FileLineColLoc(file, place.line, place.column or 0, place.end_line, place.end_column)
            chain.append(NameLoc(function, pos) if function else pos)
        frame_id = parent - 1
    if not chain:
        return None
    loc = chain[-1]
    for inner in reversed(chain[:-1]):
        loc = CallSiteLoc(inner, loc)
    return loc


__all__ = ["GENERIC", "frame_chain", "generic_facts", "location", "shape_fact"]
