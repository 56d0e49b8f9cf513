"""What the compiler recorded beside an op's semantics, as a reader wants it: the shape with its
layout, the sharding, a fusion's kind and callee, where it came from, the backend config, and any
attribute kept as written.

A program read from XLA HLO text carries these as op attributes (`xla_shape`, `mhlo.sharding`,
`hlo.backend_config`, `hlo.extra`, ...; see the HLO contract); a StableHLO program may carry some
of them too (`mhlo.sharding`, `mhlo.frontend_attributes`). Each fact is shown when the op has it,
whatever language the program came in.
"""
from __future__ import annotations

from typing import Any, Optional

from hlodbg.engine.ir.core import Operation
from hlodbg.engine.ir.locations import user_frame
from hlodbg.engine.ir.opset import owns_callee
from hlodbg.engine.ir.sharding import HloSharding, ShardingSyntaxError, device_tile, parse_hlo_sharding, tile_bounds
from hlodbg.engine.ir.types import TensorType

from .xla_shapes import SHAPE_ATTRIBUTE, special_layout, tuple_elements

MAX_FACT_CHARS = 72  # a backend config can be a page of JSON: the inspector shows its start (one line or two)


def _clipped(text: str, limit: int = MAX_FACT_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dict_text(value: Any) -> Optional[str]:
    if isinstance(value, dict) and value:
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return None


def _layout_fact(shape: str) -> str:
    """`f32[8,4]{0,1}` and, when it is not the default, what the layout is."""
    layouts = [special_layout(element) for element in tuple_elements(shape)]
    unusual = [layout for layout in layouts if layout]
    return f"{shape}  (layout {', '.join(unusual)})" if unusual else shape


def compiler_facts(op: Operation) -> list[tuple[str, str]]:
    """(label, text) pairs for the facts `op` carries, in reading order; empty for a plain op."""
    facts: list[tuple[str, str]] = []
    attrs = op.attributes
    if owns_callee(op.name) and isinstance(attrs.get("kind"), str):
        facts.append(("fusion", f"{attrs['kind']} → {attrs.get('callee')}"))
    shape = attrs.get(SHAPE_ATTRIBUTE)
    if shape is not None:
        facts.append(("shape", _layout_fact(str(shape))))
    sharding = attrs.get("mhlo.sharding")
    if sharding is not None:
        facts.append(("sharding", _clipped(str(sharding))))
    frame = user_frame(op.location) if "hlo.metadata" in attrs else None  # the metadata's source_file:line
    if frame is not None:
        facts.append(("source", frame.short()))
    backend = attrs.get("hlo.backend_config")
    if backend:
        facts.append(("backend", _clipped(str(backend))))
    frontend = _dict_text(attrs.get("mhlo.frontend_attributes"))
    if frontend:
        facts.append(("frontend", _clipped(frontend)))
    predecessors = attrs.get("hlo.control_predecessors")
    if predecessors:
        facts.append(("after", _clipped(", ".join(str(p) for p in predecessors))))
    extra = attrs.get("hlo.extra")
    if isinstance(extra, dict):
        facts.extend((str(name), _clipped(str(text))) for name, text in extra.items())
    return facts


def _shard_of(sharding: HloSharding, shape: Optional[tuple[int, ...]], device: int) -> str:
    if sharding.kind == "tuple":
        return "; ".join(_shard_of(element, None, device) for element in sharding.elements)
    if sharding.kind == "maximal":
        return "all of it" if sharding.device == device else f"none (device {sharding.device} holds it)"
    if sharding.kind != "tiled":
        return sharding.kind
    tile = device_tile(sharding, device)
    if shape is None or len(shape) != len(tile):
        return "tile [" + ",".join(map(str, tile)) + "]"
    bounds = [tile_bounds(size, tiles, index) for size, tiles, index in zip(shape, sharding.tiled_dims, tile)]
    return "[" + ", ".join(f"{start}:{stop}" for start, stop in bounds) + "]"


def device_shard(op: Optional[Operation], device: int) -> str:
    """The part of `op`'s result that `device` holds by the op's `mhlo.sharding`: `[0:4, 8:16]`,
    `replicated`, `manual`...; empty when the op states no sharding (or one hlodbg cannot read)."""
    text = op.attributes.get("mhlo.sharding") if op is not None else None
    if not isinstance(text, str):
        return ""
    result = op.results[0].type if len(op.results) == 1 else None
    shape = tuple(result.shape) if isinstance(result, TensorType) else None
    try:
        return _shard_of(parse_hlo_sharding(text), shape, device)
    except (ShardingSyntaxError, ValueError):
        return ""


def fact_lines(op: Optional[Operation]) -> list[str]:
    """The facts as `label: text` lines (the inspector's head, tooltips)."""
    if op is None:
        return []
    return [f"{label}: {text}" for label, text in compiler_facts(op)]


__all__ = ["compiler_facts", "device_shard", "fact_lines"]
