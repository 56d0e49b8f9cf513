"""Every op hlodbg knows, one module per dialect; importing this package registers them all.

Ask about ops through this package (`from ..ir.opset import lookup, is_collective, ...`): it is
the one place that guarantees every definition has been read.
"""
from __future__ import annotations

from . import check, chlo, interpreter, stablehlo, structural  # noqa: F401  (each registers its ops)
from ..opdefs import (
    CATEGORIES,
    OPS,
    AttrSpec,
    OpDef,
    callee_attribute,
    category_of,
    effect_of,
    has_aliasing_regions,
    has_expandable_body,
    is_collective,
    is_foldable,
    is_replayable,
    is_terminator,
    lookup,
    may_run_async,
    process_groups_of,
)

__all__ = [
    "AttrSpec", "CATEGORIES", "OPS", "OpDef", "callee_attribute", "category_of", "effect_of", "has_aliasing_regions",
    "has_expandable_body", "is_collective", "is_foldable", "is_replayable", "is_terminator", "lookup",
    "may_run_async", "process_groups_of",
]
