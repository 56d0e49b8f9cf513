"""The types and type parts of dialects inside builtin types: `!quant.uniform<...>` (MLIR's quant
dialect, as StableHLO's quantized tensors use it) and the bounds a `#stablehlo.bounds<...>`
encoding gives a tensor's dimensions. `p` is the value parser reading the text."""
from __future__ import annotations

import re

from ...ir.types import FloatType, IntegerType, QuantizedType

_UNSIGNED_STORAGE = re.compile(r"u(\d+)(?![\w.])")


def parse_quant_uniform(p, start: int) -> QuantizedType:
    """What follows `!quant.uniform<`: `storage<min:max>:expressed[:axis], scale[:zp] | {s:zp, ...}>`."""
    p.skip_ws()
    unsigned = _UNSIGNED_STORAGE.match(p.text, p.pos)  # the quant dialect's `u8`
    if unsigned:
        p.pos = unsigned.end()
        storage = IntegerType(int(unsigned.group(1)), "unsigned")
    else:
        storage = p.parse_type("a storage integer type")
    if not isinstance(storage, IntegerType):
        p.error("quantized storage type must be an integer type", start)
    storage_min = storage_max = None
    if p.accept("<"):
        storage_min = p.integer("storage minimum")
        p.expect(":")
        storage_max = p.integer("storage maximum")
        p.expect(">")
        # The storage type's full range is no range at all (MLIR's quant dialect prints none).
        if (storage_min, storage_max) == (storage.min_value, storage.max_value):
            storage_min = storage_max = None
    p.expect(":", "before the expressed type")
    expressed = p.parse_type("an expressed float type")
    if not isinstance(expressed, FloatType):
        p.error("quantized expressed type must be a float type", start)
    axis = None
    if p.accept(":"):
        axis = p.integer("quantized dimension")
    p.expect(",")
    scales: list[float] = []
    zero_points: list[int] = []
    if axis is not None:
        p.expect("{", "to start per-axis scales")
        while True:
            scale, zp = _scale_zero_point(p)
            scales.append(scale)
            zero_points.append(zp)
            if not p.accept(","):
                break
        p.expect("}")
    else:
        scale, zp = _scale_zero_point(p)
        scales.append(scale)
        zero_points.append(zp)
    p.expect(">", "to close !quant.uniform<...>")
    return QuantizedType(storage, expressed, tuple(scales), tuple(zero_points), axis, storage_min, storage_max)


def _scale_zero_point(p) -> tuple[float, int]:
    scale = float(p.number("a scale"))
    zp = 0
    if p.accept(":"):
        zp = p.integer("a zero point")
    return scale, zp


def check_bounds(p, shape, bounds, at: int) -> None:
    """Bounds of a ranked tensor: one per dimension, and only a dynamic dimension has one (a
    static one is `?`), as StableHLO's type extensions require."""
    if shape is None:
        p.error("an unranked tensor cannot have bounds", at)
    if len(bounds) != len(shape):
        p.error(f"{len(bounds)} bound(s) for a tensor of rank {len(shape)}: give one per dimension "
                "(? for none)", at)
    for d, (size, bound) in enumerate(zip(shape, bounds)):
        if size is not None and bound is not None:
            p.error(f"dimension {d} is static ({size}) and cannot have a bound: write ? for it", at)
